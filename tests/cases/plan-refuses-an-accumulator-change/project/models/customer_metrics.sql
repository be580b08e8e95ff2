SELECT customer_id, MAX(amount) AS total_spend
FROM ref('clean_orders')
GROUP BY customer_id
