SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM source('orders')
WHERE amount + INTERVAL '5' MINUTE > 10
GROUP BY customer_id
