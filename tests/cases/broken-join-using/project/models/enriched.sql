SELECT order_id, name
FROM source('orders') AS o
JOIN source('customers') AS c USING (customer_id)
