SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM source('orders')
WHERE CAST('2026-08-30 10:00:00.250' AS TIMESTAMP) - INTERVAL '1 02:30:00' DAY TO SECOND < TIMESTAMP '2026-08-30 10:00:00'
GROUP BY customer_id
