SELECT
    customer_id,
    COUNT(DISTINCT *) AS total_spend
FROM source('orders')
GROUP BY customer_id
