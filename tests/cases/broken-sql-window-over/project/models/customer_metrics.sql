SELECT
    customer_id,
    SUM(amount) OVER (PARTITION BY customer_id) AS total_spend
FROM source('orders')
