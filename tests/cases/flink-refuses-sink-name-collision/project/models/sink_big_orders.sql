SELECT customer_id, amount FROM ref('big_orders')
