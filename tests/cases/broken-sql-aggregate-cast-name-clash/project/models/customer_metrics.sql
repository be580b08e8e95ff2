SELECT customer_id, SUM(amount) AS total_spend, SUM(CAST(amount AS DECIMAL(20, 1))) AS rounded FROM source('orders') GROUP BY customer_id
