SELECT customer_id, SUM(CAST(amount AS DECIMAL(38, 20)) * CAST(amount AS DECIMAL(38, 20))) AS total_spend
FROM source('orders')
GROUP BY customer_id
