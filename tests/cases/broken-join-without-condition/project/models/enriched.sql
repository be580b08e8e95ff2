SELECT o.order_id, c.name
FROM source('orders') AS o
CROSS JOIN source('customers') AS c
