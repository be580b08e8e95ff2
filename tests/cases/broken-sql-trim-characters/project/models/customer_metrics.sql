SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM source('orders')
WHERE TRIM(BOTH 'x' FROM CAST(customer_id AS STRING)) = '1'
GROUP BY customer_id
