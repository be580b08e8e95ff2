SELECT o.order_id, c.name
FROM source('orders') AS o
JOIN source('customers') AS c ON o.customer_id = c.name
