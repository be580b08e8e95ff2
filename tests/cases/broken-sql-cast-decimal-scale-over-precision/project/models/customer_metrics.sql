SELECT customer_id, SUM(CAST(amount AS DECIMAL(5, 6))) AS total_spend FROM source('orders') GROUP BY customer_id
