SELECT o.order_id, o.amount, c.name
FROM source('orders') AS o
JOIN source('customers') AS c ON o.customer_id = c.customer_id AND o.amount <= c.credit_limit
