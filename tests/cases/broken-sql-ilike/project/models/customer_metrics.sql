SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM source('orders')
WHERE CAST(customer_id AS STRING) ILIKE '1%'
GROUP BY customer_id
