SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM source('orders')
WHERE CAST(customer_id AS VARCHAR) LIKE '4%'
GROUP BY customer_id
