SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM source('orders')
WHERE TIMESTAMP '2026-08-30T10:00:00' > TIMESTAMP '2026-08-30 10:00:00'
GROUP BY customer_id
