SELECT
    customer_id,
    amount,
    COUNT(*) AS n
FROM source('orders')
GROUP BY customer_id, amount
