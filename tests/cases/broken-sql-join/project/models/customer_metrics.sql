SELECT
    o.customer_id,
    SUM(o.amount) AS total_spend
FROM source('orders') AS o
JOIN source('orders') AS p ON o.customer_id = p.customer_id
GROUP BY o.customer_id
