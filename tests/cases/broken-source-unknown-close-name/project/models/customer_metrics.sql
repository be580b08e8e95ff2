SELECT
    customer_id,
    SUM(amount) AS total_spend
FROM source('order')
GROUP BY customer_id
