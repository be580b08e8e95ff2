SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM source('orders')
WHERE CAST('2026-08-30 10:00:00' AS TIMESTAMP) + INTERVAL '1' WEEK > TIMESTAMP '2026-08-30 10:00:00'
GROUP BY customer_id
