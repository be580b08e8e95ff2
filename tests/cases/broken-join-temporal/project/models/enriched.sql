SELECT o.order_id, c.name
FROM source('orders') AS o
JOIN source('customers') FOR SYSTEM_TIME AS OF o.ordered_at AS c ON o.customer_id = c.customer_id
