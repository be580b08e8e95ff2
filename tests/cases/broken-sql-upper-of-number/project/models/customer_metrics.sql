SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM source('orders')
WHERE UPPER(customer_id) = '1'
GROUP BY customer_id
