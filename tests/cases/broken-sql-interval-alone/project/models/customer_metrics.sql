SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM source('orders')
WHERE INTERVAL '5' MINUTE IS NOT NULL
GROUP BY customer_id
