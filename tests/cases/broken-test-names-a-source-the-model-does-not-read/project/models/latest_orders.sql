SELECT order_id, status, amount
FROM source('orders')
