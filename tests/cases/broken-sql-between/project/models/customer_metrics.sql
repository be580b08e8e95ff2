SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM source('orders')
WHERE amount BETWEEN 0 AND 100
GROUP BY customer_id
