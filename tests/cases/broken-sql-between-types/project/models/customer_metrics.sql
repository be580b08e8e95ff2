SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM source('orders')
WHERE amount BETWEEN 'low' AND 100
GROUP BY customer_id
