SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM source('orders')
WHERE customer_id IN (1, 'two')
GROUP BY customer_id
