SELECT customer_id, amount FROM ref('model_b')
