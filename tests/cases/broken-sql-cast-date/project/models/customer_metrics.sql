SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM source('orders')
WHERE CAST(customer_id AS DATE) IS NOT NULL
GROUP BY customer_id
