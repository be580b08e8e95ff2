SELECT order_id, customer_id, c.name
FROM source('orders') AS o
JOIN source('customers') AS c ON o.customer_id = c.customer_id
