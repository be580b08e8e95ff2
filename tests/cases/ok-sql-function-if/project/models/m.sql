SELECT order_id, IF(amount > 10, 'big', 'small') AS size FROM source('orders')
