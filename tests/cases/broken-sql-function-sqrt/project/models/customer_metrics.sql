SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM source('orders')
WHERE sqrt(amount) > 0
GROUP BY customer_id
