SELECT o.order_id, c.name
FROM source('orders') AS o
JOIN source('customers') AS c ON o.amount > c.credit_limit
