SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM source('orders')
WHERE SUBSTRING(CAST(customer_id AS STRING), 1, customer_id) = '1'
GROUP BY customer_id
