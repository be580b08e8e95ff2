SELECT customer_id, amount FROM ref('small_orders') WHERE amount < 5
