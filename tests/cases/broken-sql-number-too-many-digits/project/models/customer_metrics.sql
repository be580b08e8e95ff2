SELECT customer_id, SUM(amount) AS total_spend
FROM source('orders')
WHERE amount < 1234567890123456789012345678901234567890.5
GROUP BY customer_id
