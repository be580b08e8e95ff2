SELECT o.order_id, c.name
FROM source('orders') AS o
JOIN source('customer_updates') AS c ON o.customer_id = c.customer_id
