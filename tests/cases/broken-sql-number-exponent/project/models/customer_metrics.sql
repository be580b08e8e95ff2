SELECT customer_id, SUM(amount * 1.5e-1) AS total_spend
FROM source('orders')
GROUP BY customer_id
