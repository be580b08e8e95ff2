SELECT
    customer_id,
    AVG(amount) AS total_spend
FROM source('orders')
GROUP BY customer_id
