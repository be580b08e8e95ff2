SELECT order_id, amount FROM source('app_orders')
