SELECT customer_id, SUM(amount) AS total_spend
FROM source('orders')
WHERE customer_id < 9223372036854775808
GROUP BY customer_id
