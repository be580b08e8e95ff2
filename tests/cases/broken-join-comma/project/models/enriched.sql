SELECT o.order_id, c.name
FROM source('orders') AS o, source('customers') AS c
WHERE o.customer_id = c.customer_id
