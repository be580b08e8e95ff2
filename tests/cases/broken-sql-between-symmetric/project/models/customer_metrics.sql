SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM source('orders')
WHERE amount BETWEEN SYMMETRIC 100 AND 0
GROUP BY customer_id
