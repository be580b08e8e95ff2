SELECT order_id, IF(amount > 10, 'big') AS size FROM source('orders')
