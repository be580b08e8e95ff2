SELECT o.order_id, c.name
FROM source('orders') AS o
LEFT JOIN source('customers') AS c ON o.customer_id = c.customer_id
