SELECT customer_id, SUM(amount) AS total_spend
FROM source('orders')
WHERE CAST(amount AS DECIMAL) > 1
GROUP BY customer_id
