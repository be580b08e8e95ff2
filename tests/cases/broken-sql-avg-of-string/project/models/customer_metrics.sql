SELECT
    customer_id,
    AVG(note) AS total_spend
FROM source('orders')
GROUP BY customer_id
