SELECT
    o.customer_id,
    SUM(o.amount) AS total_spend
FROM source('orders') AS o
GROUP BY o.customer_id
