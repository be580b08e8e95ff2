SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM source('orders')
WHERE SUM(amount) > 10
GROUP BY customer_id
