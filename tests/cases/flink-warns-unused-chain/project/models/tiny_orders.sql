SELECT customer_id, amount FROM ref('valid_orders') WHERE amount < 1
