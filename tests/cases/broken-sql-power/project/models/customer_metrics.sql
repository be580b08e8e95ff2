SELECT
    customer_id,
    SUM(POWER(amount, 2)) AS total_spend
FROM source('orders')
GROUP BY customer_id
