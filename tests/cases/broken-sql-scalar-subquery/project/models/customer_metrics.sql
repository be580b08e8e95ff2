SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM source('orders')
WHERE amount > (SELECT 0)
GROUP BY customer_id
