SELECT o.customer_id, COUNT(*) AS orders
FROM source('orders') AS o
JOIN source('customers') AS c ON o.customer_id = c.customer_id
GROUP BY o.customer_id
