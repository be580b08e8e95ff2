SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM source('orders')
WHERE CAST(customer_id AS STRING) LIKE '1!%' ESCAPE '!'
GROUP BY customer_id
