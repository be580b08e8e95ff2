SELECT
    customer_id,
    COUNT(DISTINCT amount) AS total_spend
FROM source('orders')
GROUP BY customer_id
